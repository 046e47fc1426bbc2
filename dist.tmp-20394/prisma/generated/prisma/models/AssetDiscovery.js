//# sourceMappingURL=AssetDiscovery.js.map
