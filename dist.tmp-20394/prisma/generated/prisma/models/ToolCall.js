//# sourceMappingURL=ToolCall.js.map
