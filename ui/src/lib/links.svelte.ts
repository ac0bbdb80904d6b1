/**
 * Links in rendered text (the model's Markdown, a plan, a question) are never followed
 * inside the window. A click asks first: the full URL is shown in a dialog of the app
 * (outside the rendered text), and only "Open in browser" hands it to the person's
 * browser. Anything but http and https is only shown.
 */
export class LinkRequest {
  url = $state<string | null>(null);

  /** A click on a link with this `href`. */
  ask(href: string) {
    this.url = href;
  }

  close() {
    this.url = null;
  }
}

export const linkRequest = new LinkRequest();

/** Whether a link may be handed to a browser at all. */
export function opensInBrowser(href: string): boolean {
  // The backend parses and checks it again before anything opens.
  return /^https?:\/\/[^/\s?#]/i.test(href.trim());
}
