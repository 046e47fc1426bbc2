//# sourceMappingURL=WorkspaceApiKey.js.map
