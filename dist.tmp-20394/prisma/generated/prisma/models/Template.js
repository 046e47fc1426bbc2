//# sourceMappingURL=Template.js.map
