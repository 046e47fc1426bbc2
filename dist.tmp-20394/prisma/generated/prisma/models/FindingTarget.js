//# sourceMappingURL=FindingTarget.js.map
