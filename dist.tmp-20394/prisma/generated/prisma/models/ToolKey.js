//# sourceMappingURL=ToolKey.js.map
