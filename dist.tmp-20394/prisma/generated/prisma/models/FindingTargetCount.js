//# sourceMappingURL=FindingTargetCount.js.map
