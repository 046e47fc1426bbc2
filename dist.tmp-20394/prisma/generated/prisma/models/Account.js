//# sourceMappingURL=Account.js.map
