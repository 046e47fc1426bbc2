//# sourceMappingURL=FindingCount.js.map
