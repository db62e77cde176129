process.env.TEST_DB = 'sqlite';
