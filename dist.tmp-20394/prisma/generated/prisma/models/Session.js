//# sourceMappingURL=Session.js.map
