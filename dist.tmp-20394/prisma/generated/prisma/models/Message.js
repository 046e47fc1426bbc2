//# sourceMappingURL=Message.js.map
