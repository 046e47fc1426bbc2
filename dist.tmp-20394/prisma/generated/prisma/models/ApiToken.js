//# sourceMappingURL=ApiToken.js.map
