import { GraphQLError, Kind } from 'graphql';
import { builder } from './builder.js';
import { isoString } from '../iso-string.js';

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time string (UTC).',
  serialize: (value) => isoString(value instanceof Date ? value : new Date(value as string)),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
  parseLiteral: (ast) => {
    const date = ast.kind === Kind.STRING ? new Date(ast.value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
});
