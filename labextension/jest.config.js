/**
 * Front unit tests: plain modules (the store, the protocol) under ts-jest in node;
 * the markdown path's tests (markdown.spec.ts) run in jsdom against JupyterLab's own
 * renderMarkdown and Sanitizer and the marked parser, whose ES modules are compiled here.
 * ts-jest only transpiles (isolatedModules): `jlpm typecheck` type-checks the tests and
 * the sources together (test/tsconfig.json), once instead of file by file here.
 */
const ES_MODULES = ['@jupyterlab/rendermime', '@jupyterlab/apputils', 'marked'];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json', isolatedModules: true }],
    '^.+/node_modules/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022' }, isolatedModules: true }
    ]
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ES_MODULES.join('|')})/)`]
};
