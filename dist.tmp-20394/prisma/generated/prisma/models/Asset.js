//# sourceMappingURL=Asset.js.map
