DROP TABLE IF EXISTS portal_sessions;
