//# sourceMappingURL=WebhookDelivery.js.map
