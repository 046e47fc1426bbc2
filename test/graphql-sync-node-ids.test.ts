import { randomUUID } from 'node:crypto';
import { isObjectType, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/graphql/schema.js';
import { nodeIdOf, type NodeTypeName } from '../src/graphql/ids.js';

const nodeTypes = Object.values(schema.getTypeMap()).filter(
  (type) => isObjectType(type) && type.getInterfaces().some((iface) => iface.name === 'Node'),
) as Array<import('graphql').GraphQLObjectType>;

describe('Node ids resolve synchronously (graphql/sync-node-ids.ts)', () => {
  it('every Node type answers its global id as a plain string, the same the REST nodeId carries', () => {
    expect(nodeTypes.map((type) => type.name).sort()).toEqual(['Asset', 'Conversation', 'Finding', 'Scan', 'ScanSchedule', 'Target', 'Workspace']);
    for (const type of nodeTypes) {
      const id = randomUUID();
      const answer = type.getFields().id!.resolve!({ id }, {}, {}, {} as GraphQLResolveInfo);
      // A promise here made graphql-js complete every row of a page asynchronously.
      expect(typeof answer, type.name).toBe('string');
      expect(answer).toBe(nodeIdOf(type.name as NodeTypeName, id));
      expect(Buffer.from(answer as string, 'base64').toString()).toBe(`${type.name}:${id}`);
    }
  });
});
