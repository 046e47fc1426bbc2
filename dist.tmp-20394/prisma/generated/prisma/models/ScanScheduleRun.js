//# sourceMappingURL=ScanScheduleRun.js.map
