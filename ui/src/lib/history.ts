/**
 * The prompts sent in this window, for Up/Down recall in the composer (like a shell):
 * Up in an empty composer (or one still showing a recalled prompt) steps back, Down
 * steps forward and finally restores what was typed before.
 */
export class PromptHistory {
  #entries: string[] = [];
  #index: number | null = null;
  #draft = '';

  add(prompt: string) {
    if (prompt.trim() === '') return;
    if (this.#entries[this.#entries.length - 1] !== prompt) this.#entries.push(prompt);
    this.#index = null;
  }

  /** The previous prompt, or null when there is none. */
  up(current: string): string | null {
    if (this.#entries.length === 0) return null;
    if (this.#index === null) {
      this.#draft = current;
      this.#index = this.#entries.length - 1;
    } else if (this.#index > 0) {
      this.#index -= 1;
    } else {
      return null;
    }
    return this.#entries[this.#index];
  }

  /** The next prompt, or the saved draft after the newest; null when not recalling. */
  down(): string | null {
    if (this.#index === null) return null;
    if (this.#index < this.#entries.length - 1) {
      this.#index += 1;
      return this.#entries[this.#index];
    }
    this.#index = null;
    return this.#draft;
  }

  /** Whether `text` is the prompt being recalled (so Up keeps stepping). */
  recalling(text: string): boolean {
    return this.#index !== null && this.#entries[this.#index] === text;
  }

  reset() {
    this.#index = null;
  }
}
