//# sourceMappingURL=WorkspaceDiscoverySettings.js.map
