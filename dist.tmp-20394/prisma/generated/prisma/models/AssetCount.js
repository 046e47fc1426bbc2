//# sourceMappingURL=AssetCount.js.map
