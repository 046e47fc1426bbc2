//# sourceMappingURL=WorkspaceTemplateRunSettings.js.map
