//# sourceMappingURL=Scan.js.map
