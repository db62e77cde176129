/**
 * The body parser of every form post (hosted pages, OAuth's token and revocation endpoints): small
 * url-encoded bodies. Apart from the page hygiene, which the services load, so that a process that
 * serves no HTTP (a CLI command) does not load Express.
 */
import express from 'express';

export const parseForm = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
