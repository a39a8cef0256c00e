// Digital Bazaar's signing libraries ship no typings. In the repository's type-check,
// shared/agentiam/vendor.d.ts declares exactly the parts used (exact module declarations win over
// a pattern), and delegation/ is checked against them; when the package builds alone
// (tsconfig.build.json), this pattern stands in. No type of these modules is part of the
// package's public declarations.
declare module '@digitalbazaar/*';
