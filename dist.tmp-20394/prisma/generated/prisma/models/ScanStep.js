//# sourceMappingURL=ScanStep.js.map
