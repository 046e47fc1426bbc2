//# sourceMappingURL=ScanSchedule.js.map
