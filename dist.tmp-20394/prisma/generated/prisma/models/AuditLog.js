//# sourceMappingURL=AuditLog.js.map
