//# sourceMappingURL=WorkspaceToolSetting.js.map
