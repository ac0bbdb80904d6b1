import { mount } from 'svelte';
import App from './App.svelte';
import { perf } from './lib/transcript.svelte';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('Decode: #app element missing from index.html');

// WebKit's own context menu would offer "Download Linked File", "Open Link" and
// "Reload" on anything the model wrote: outside text fields (where it is cut, copy and
// paste) the app shows none. Links open only through the app's own link dialog.
window.addEventListener('contextmenu', (event) => {
  const target = event.target;
  const field =
    target instanceof HTMLTextAreaElement ||
    (target instanceof HTMLInputElement && target.type === 'text') ||
    (target instanceof HTMLElement && target.isContentEditable);
  if (!field) event.preventDefault();
});

const app = mount(App, { target });

// The window bench (bench/window.sh) reads the token-to-paint figures from here.
Object.defineProperty(window, '__decodePerf', { value: perf });

export default app;
