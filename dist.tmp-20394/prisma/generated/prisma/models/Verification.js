//# sourceMappingURL=Verification.js.map
