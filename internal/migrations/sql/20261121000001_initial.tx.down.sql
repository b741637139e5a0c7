DROP TABLE IF EXISTS webhook_deliveries, events, webhook_subscriptions, projects, api_keys, workspace_members, users, workspaces;
