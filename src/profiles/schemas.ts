import { t } from 'elysia'
import { NullableString } from '../http/schemas.ts'

export const Profile = t.Object({
  username: t.String(),
  bio: NullableString,
  image: NullableString,
  following: t.Boolean({ description: 'whether the caller follows this user; false for anonymous callers' }),
})
export const ProfileResponse = t.Object({ profile: Profile })
export const UsernameParams = t.Object({ username: t.String() })
