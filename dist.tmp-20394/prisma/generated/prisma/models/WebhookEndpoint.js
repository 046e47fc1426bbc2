//# sourceMappingURL=WebhookEndpoint.js.map
