//# sourceMappingURL=FindingEvent.js.map
