import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import ts from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import svelteConfig from './svelte.config.js';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ts.configs.recommended,
  svelte.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.browser },
    },
  },
  {
    files: ['*.config.js', '*.config.ts'],
    languageOptions: {
      globals: { ...globals.node },
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts', '**/*.svelte.js'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        extraFileExtensions: ['.svelte'],
        parser: ts.parser,
        svelteConfig,
      },
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // The architecture rule: only the backend module talks to Tauri.
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['@tauri-apps/*'], message: 'Only src/lib/backend.ts may import @tauri-apps/*.' }],
        },
      ],
    },
  },
  {
    // backend.ts is the one door to Tauri; its own test mocks the Tauri modules.
    files: ['src/lib/backend.ts', 'src/lib/backend.test.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
