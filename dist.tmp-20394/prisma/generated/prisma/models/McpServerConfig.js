//# sourceMappingURL=McpServerConfig.js.map
