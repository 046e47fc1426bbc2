//# sourceMappingURL=Conversation.js.map
