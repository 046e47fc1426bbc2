//# sourceMappingURL=ChangeEvent.js.map
