//# sourceMappingURL=WorkspaceInvitation.js.map
