//# sourceMappingURL=Finding.js.map
