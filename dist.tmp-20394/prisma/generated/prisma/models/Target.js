//# sourceMappingURL=Target.js.map
