DROP TABLE IF EXISTS portal_secret_stash;
DROP TABLE IF EXISTS portal_form_submissions;
