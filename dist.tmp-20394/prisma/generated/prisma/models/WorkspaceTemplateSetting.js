//# sourceMappingURL=WorkspaceTemplateSetting.js.map
