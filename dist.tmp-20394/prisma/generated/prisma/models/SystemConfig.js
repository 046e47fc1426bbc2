//# sourceMappingURL=SystemConfig.js.map
