//# sourceMappingURL=ModelConfig.js.map
