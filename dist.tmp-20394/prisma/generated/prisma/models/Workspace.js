//# sourceMappingURL=Workspace.js.map
