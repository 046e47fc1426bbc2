//# sourceMappingURL=WorkspaceMember.js.map
