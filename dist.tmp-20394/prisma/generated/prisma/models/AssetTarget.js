//# sourceMappingURL=AssetTarget.js.map
