//# sourceMappingURL=User.js.map
