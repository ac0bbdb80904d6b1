import { mount } from 'svelte';
import App from './App.svelte';
import { perf } from './lib/transcript.svelte';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('Decode: #app element missing from index.html');

const app = mount(App, { target });

// The window bench (bench/window.sh) reads the token-to-paint figures from here.
Object.defineProperty(window, '__decodePerf', { value: perf });

export default app;
