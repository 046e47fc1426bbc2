//# sourceMappingURL=Tool.js.map
