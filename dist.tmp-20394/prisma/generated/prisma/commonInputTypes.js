//# sourceMappingURL=commonInputTypes.js.map
